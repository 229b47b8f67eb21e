import type { Request } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';

/** One or more comma-separated feature names, as Anthropic's SDKs and Claude Code send them. */
const BETAS = /^\s*[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9._-]+)*\s*$/;

/**
 * The caller's `anthropic-beta` header, normalised (`a,b`), for an Anthropic-native upstream; several
 * header lines are joined as Anthropic joins them. Not a list of names: 400.
 */
export function anthropicBeta(req: Request): string | undefined {
  const raw = req.headers['anthropic-beta'];
  const v = (Array.isArray(raw) ? raw.join(',') : raw)?.trim();
  if (!v) return undefined;
  if (v.length > 2048 || !BETAS.test(v)) {
    throw new ApiError(400, 'invalid_request', "The 'anthropic-beta' header must be a comma-separated list of feature names.");
  }
  return v.split(',').map((s) => s.trim()).join(',');
}
