/** A startup failure an operator can act on: its message is one line naming the cause and the fix. */
export class StartupError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
  }
}
