import type { PlatformPrincipal } from '../../shared/platform/keys';
import type { Family } from '../../shared/platform/families';

declare global {
  namespace Express {
    interface Request {
      /** Set on the management API once the bearer credential is authenticated. */
      admin?: { principal: PlatformPrincipal; family: Family | null };
    }
  }
}
