/** One argument of a Redis command: text is sent as UTF-8, a Buffer as its raw bytes. */
export type CommandArg = string | Buffer;

/** A Redis command: its name followed by its arguments, e.g. `["SET", "k", "v"]`. */
export type Command = readonly CommandArg[];
