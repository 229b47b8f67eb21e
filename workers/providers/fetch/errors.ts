import { ApiError } from '../../../shared/errors/ApiError';
import { searchErrors } from '../../../shared/search/errors';

/**
 * The native fetch's own refusals. They reach the model in-band (the request itself does not
 * fail), so the status only matters to callers that surface them over HTTP.
 */
export const fetchErrors = {
  notAllowed: (why: string) => searchErrors.fetchNotAllowed(why),
  failed: (why: string) => new ApiError(502, 'fetch_failed', why),
  tooLarge: (maxBytes: number) => new ApiError(413, 'fetch_too_large', `The page is larger than ${maxBytes} bytes.`),
  unsupportedType: (type: string) => new ApiError(415, 'unsupported_content_type', `Only text pages are fetched; this one is '${type}'.`),
};
