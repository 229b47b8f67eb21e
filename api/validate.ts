import type Joi from 'joi';
import { ApiError } from '../shared/errors/ApiError';

/** Validates with a Joi schema; the first problem becomes a 400 with the given code. */
export function validate<T>(schema: Joi.Schema, value: unknown, code = 'invalid_request'): T {
  const { error, value: out } = schema.validate(value, { abortEarly: true, convert: false });
  if (error) throw new ApiError(400, code, error.details[0]?.message.replace(/"/g, "'") ?? 'Invalid request.');
  return out as T;
}
