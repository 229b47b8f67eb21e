import { ApiError } from '../errors/ApiError';

/**
 * The audio transcription codes of the spec's error table. Messages are fixed strings: they never
 * carry the prompt, the filename, the transcript or an upstream's own words.
 */
export const audioErrors = {
  /** `param`: the part at fault, by the name the caller sent it under (OpenAI's `error.param`); none for the body as a whole. */
  invalidRequest: (message: string, param?: string) => new ApiError(400, 'invalid_request', message, { param }),
  unsupportedParameter: (message: string, param?: string) => new ApiError(400, 'unsupported_parameter', message, { param }),
  tooLarge: (maxBytes: number) =>
    new ApiError(413, 'audio_too_large', `The audio file is larger than ${maxBytes} bytes (${maxBytes / 1024 / 1024} MiB).`),
  tooLong: (maxSeconds: number) =>
    new ApiError(400, 'audio_too_long', `The audio is longer than this model's limit of ${maxSeconds} seconds.`),
  bodyReadTimeout: (ms: number) =>
    new ApiError(408, 'body_read_timeout', `The upload did not finish within ${Math.round(ms / 1000)} seconds.`),
  disabledForOrg: () => new ApiError(403, 'audio_disabled', 'Audio transcription is switched off for this organization.'),
  atCapacity: (retryAfter: number) =>
    new ApiError(503, 'audio_at_capacity', 'The gateway is at its concurrent audio ceiling; retry shortly.', { retryAfter }),
  lanesExhausted: (retryAfter: number) =>
    new ApiError(429, 'audio_lanes_exhausted', 'This organization is at its concurrent audio allowance; back off and retry.', { retryAfter }),
  backendRateLimited: (retryAfter: number, message = 'The audio backend is shedding load; back off and retry.') =>
    new ApiError(429, 'audio_backend_rate_limited', message, { retryAfter }),
  backendUnavailable: (message = 'The audio backend is unreachable or failed.', retryAfter = 2) =>
    new ApiError(502, 'audio_backend_unavailable', message, { retryAfter }),
  deadline: () => new ApiError(504, 'audio_deadline_exceeded', 'The transcription did not finish before its deadline.'),
};
