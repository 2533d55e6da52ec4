/**
 * A failure with an HTTP status, thrown anywhere in request handling and rendered as `{"error": message}`.
 * Messages of 4xx errors start with `ERR` so they read like Redis errors in the client's `UpstashError`.
 */
export class HttpError extends Error {
  override name = "HttpError";

  /**
   * @param status HTTP status code of the response.
   * @param message Text of the `error` field.
   * @param headers Extra response headers (e.g. `Allow` on a 405).
   */
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}
