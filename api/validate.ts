import type Joi from 'joi';
import { ApiError } from '../shared/errors/ApiError';

function check<T>(schema: Joi.Schema, value: unknown, code: string, convert: boolean): T {
  const { error, value: out } = schema.validate(value, { abortEarly: true, convert });
  if (error) throw new ApiError(400, code, error.details[0]?.message.replace(/"/g, "'") ?? 'Invalid request.');
  return out as T;
}

/** Validates with a Joi schema; the first problem becomes a 400 with the given code. */
export function validate<T>(schema: Joi.Schema, value: unknown, code = 'invalid_request'): T {
  return check<T>(schema, value, code, false);
}

/** Validates a query string (its values arrive as strings, so they are converted); the first problem is a 400 `invalid_request`. */
export function validateQuery<T>(schema: Joi.Schema, query: unknown): T {
  return check<T>(schema, query, 'invalid_request', true);
}
