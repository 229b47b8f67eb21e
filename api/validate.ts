import type Joi from 'joi';
import { ApiError } from '../shared/errors/ApiError';

/**
 * Validates with a Joi schema; the first problem becomes a 400 with the given code. `convert` lets
 * Joi turn strings into the schema's types (query strings, multipart fields); JSON is taken as typed.
 */
export function validate<T>(schema: Joi.Schema, value: unknown, code = 'invalid_request', convert = false): T {
  const { error, value: out } = schema.validate(value, { abortEarly: true, convert });
  if (error) throw new ApiError(400, code, error.details[0]?.message.replace(/"/g, "'") ?? 'Invalid request.');
  return out as T;
}

/** Validates a query string (its values arrive as strings, so they are converted); the first problem is a 400 `invalid_request`. */
export function validateQuery<T>(schema: Joi.Schema, query: unknown): T {
  return validate<T>(schema, query, 'invalid_request', true);
}
