declare module 'pgpass' {
  /** Calls back with the password of the first matching ~/.pgpass (or PGPASSFILE) line, or undefined. */
  function pgpass(
    conn: { host?: string; port?: number | string; database?: string; user?: string },
    cb: (password: string | undefined) => void,
  ): void;
  export default pgpass;
}
