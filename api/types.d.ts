import type { OrgContext } from '../shared/tenancy/directory';

export interface AuthInfo {
  keyId: string;
  orgId: string;
  org: OrgContext;
  projectId: string | null;
  /** The member (user) the key belongs to, if it was created for one. */
  userId: string | null;
  /** A caller's own upstream key (no `svc_` prefix) sent as Bearer or x-api-key. */
  callerUpstreamKey: string | null;
  routingPlanId: string | null;
  modelMap: Record<string, string>;
}

declare global {
  namespace Express {
    interface Request {
      id: string;
      auth?: AuthInfo;
      /** Set by path-authentication mounts (`/a/...`, `/r/...`). */
      pathAuth?: { apiKey?: string; project?: string; routingPlanId?: string };
      /** How the error handler writes this request's errors; default is the flat envelope. */
      errorStyle?: 'flat' | 'anthropic';
    }
  }
}
