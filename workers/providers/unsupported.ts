import { ApiError } from '../../shared/errors/ApiError';

/** 400 `unsupported_parameter` naming the field: a translated upstream (Gemini, Anthropic) cannot express it as asked. */
export function unsupported(param: string, why: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `\`${param}\` ${why}`, { param });
}

/** A request field that was given (not absent, not null). */
export const given = (v: unknown): boolean => v !== undefined && v !== null;
