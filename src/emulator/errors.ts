/**
 * The emulator's own errors: it is a product part with a boundary, so it never throws the
 * exporter's errors. Codes are stable strings, as in the exporter's hierarchy.
 */

export type EmulatorErrorCode = 'CONFIG_INVALID' | 'DATA_INVALID' | 'INPUT_INVALID';

export class EmulatorError extends Error {
  readonly code: EmulatorErrorCode;
  constructor(code: EmulatorErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Bad options, keys file or listening address: names the setting and what is wrong. */
export class EmulatorConfigError extends EmulatorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', message, options);
  }
}

/** The SEC data (or a lookup into it) is not what the emulator needs: names the file or id. */
export class EmulatorDataError extends EmulatorError {
  constructor(message: string, options?: { cause?: unknown; code?: 'DATA_INVALID' | 'INPUT_INVALID' }) {
    super(options?.code ?? 'INPUT_INVALID', message, options);
  }
}

/** Any thrown value as an Error (for logs and messages). */
export function toError(err: unknown): Error {
  if (err instanceof Error) return err;
  return new Error(typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err)));
}
