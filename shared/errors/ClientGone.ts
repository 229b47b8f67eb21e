/** Raised when the client disconnected before its answer; nothing is written back. */
export class ClientGone extends Error {
  constructor() {
    super('client disconnected');
  }
}
