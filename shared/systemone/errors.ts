import { ApiError } from '../errors/ApiError';

/** The decision endpoint's error codes (spec "Decision models" table, plus the documented siblings). */
export const systemoneErrors = {
  invalid: (message: string) => new ApiError(400, 'systemone_invalid_request', message),
  policyDisabled: () =>
    new ApiError(403, 'systemone_policy_disabled', 'Decision models are not enabled for this organization.'),
  gateBusy: (retryAfter: number) =>
    new ApiError(429, 'systemone_gate_busy', 'Too many decision requests in flight for this organization; retry shortly.', { retryAfter }),
  backendBusy: (retryAfter: number, message = 'The decision backend is rate limiting; retry later.') =>
    new ApiError(429, 'systemone_backend_busy', message, { retryAfter }),
  backendError: (message: string) => new ApiError(502, 'systemone_backend_error', message),
  deadline: () => new ApiError(504, 'systemone_deadline_exceeded', 'The decision request did not finish before its deadline.'),
  /** The catalog could not be read. */
  modelsUnavailable: () =>
    new ApiError(503, 'systemone_models_unavailable', 'The decision model catalog is temporarily unavailable; retry shortly.', { retryAfter: 5 }),
  /** The wallet could not be read or written. */
  billingUnavailable: () =>
    new ApiError(503, 'systemone_billing_unavailable', 'Billing is temporarily unavailable; retry shortly.', { retryAfter: 5 }),
  /** The queue could not take the job. */
  queueUnavailable: () =>
    new ApiError(503, 'systemone_queue_unavailable', 'The decision service is temporarily unavailable; retry shortly.', { retryAfter: 5 }),
};
