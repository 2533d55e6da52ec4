// #region readme
/** A store that refuses writes carrying an older fencing token than one it has accepted. */
export class FencedStore {
  #highestToken = 0;
  #values = new Map<string, string>();

  write(key: string, value: string, fencingToken: number): boolean {
    if (fencingToken < this.#highestToken) return false; // a newer holder has written since
    this.#highestToken = fencingToken;
    this.#values.set(key, value);
    return true;
  }

  read(key: string): string | undefined {
    return this.#values.get(key);
  }
}
// #endregion
