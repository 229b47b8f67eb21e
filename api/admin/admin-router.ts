import { Router } from 'express';

/**
 * Every router of the management API is case-sensitive and strict: only the exact spelling of a
 * path reaches a handler, so the spelling the guard classifies (api/admin/auth.ts, canonicalised
 * there) can never differ from the route express runs (`/users/:id/PLATFORM-ADMIN` or
 * `/platform-keys/` are 404, not the platform-admin handlers).
 */
export function adminRouter(): Router {
  return Router({ caseSensitive: true, strict: true });
}
