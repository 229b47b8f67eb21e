import { ApiError } from '../../../shared/errors/ApiError';
import { searchErrors } from '../../../shared/search/errors';

/**
 * The native fetch's own refusals. They reach the model in-band (the request itself does not
 * fail), so the status only matters to callers that surface them over HTTP.
 */
export const fetchErrors = {
  notAllowed: (why: string) => searchErrors.fetchNotAllowed(why),
  /** `holdMs`: not to be told before the fetch's deadline (shared/net/ssrf.ts `deferDeadline`). */
  failed: (why: string, holdMs?: number) => new ApiError(502, 'fetch_failed', why, { holdMs }),
  tooLarge: (maxBytes: number) => new ApiError(413, 'fetch_too_large', `The page is larger than ${maxBytes} bytes.`),
  unsupportedType: (type: string) => new ApiError(415, 'unsupported_content_type', `Only text pages are fetched; this one is '${type}'.`),
};
