import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * A secret value (the API key). Every way of turning it into text (String(), JSON, util.inspect,
 * template literals, pino) yields `[redacted]`; only `reveal()` gives the value, at the one place
 * that puts it into an HTTP header.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
