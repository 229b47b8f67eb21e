import type { OrgContext } from '../shared/tenancy/directory';
import type { KeyControls } from '../shared/limits/controls';
import type { RequestTrace } from './middleware/trace-request';
import type { UsageRecord } from '../shared/metering/usage';
import type { HeldSearchCharge } from '../shared/search/ledger';

export interface AuthInfo {
  keyId: string;
  /** The SHA-256 of the secret presented (the key's or its previous one): what the key is looked up by again (api/kept-identity.ts). */
  keyHash: string;
  orgId: string;
  org: OrgContext;
  projectId: string | null;
  /** The member (user) the key belongs to, if it was created for one. */
  userId: string | null;
  /** A caller's own upstream key (no `svc_` prefix) sent as Bearer or x-api-key. */
  callerUpstreamKey: string | null;
  routingPlanId: string | null;
  modelMap: Record<string, string>;
  /** The owner's controls on the key: allowed models, rate limits, budget (docs/keys.md). */
  controls: KeyControls;
}

/** A background response resumed on this pod after the pod that ran it was lost (api/routes/responses/background-resume.ts). */
export interface ResumedResponse {
  /** The stored response's id and creation time (seconds), kept. */
  responseId: string;
  createdAt: number;
  /** When the caller's request arrived (ms): its request log row's key. */
  receivedAt: number;
}

/** A batch line runs on the background lane under its own count, priced at the plan's multiplier. */
export interface BatchLine {
  /** The batch the line belongs to: its request log row's `batch_id`. */
  batchId: string;
  laneLimit: number;
  priceMultiplier: number;
  /** The usage of the line's jobs, carried with their answers (set by runJob): the runner bills it with the line. */
  usage?: UsageRecord[];
  /** Its native search loop's searches, charged only when the line is recorded as succeeded (api/dispatch/search.ts). */
  searches?: HeldSearchCharge[];
  /** A failure of the gateway's own machinery (worker lost) will run the line again: it is no outcome, and has no Activity row (shared/batches/pacing.ts). */
  crashRetried?: boolean;
}

declare global {
  namespace Express {
    interface Request {
      id: string;
      auth?: AuthInfo;
      /** Set by the batch runner's ticket app (api/ticket-app.ts): this request is one line of a batch. */
      batchLine?: BatchLine;
      /** Set by the ticket app (api/ticket-app.ts): this request resumes a background response. */
      resumedResponse?: ResumedResponse;
      /** Set by path-authentication mounts (`/a/...`, `/r/...`). */
      pathAuth?: { apiKey?: string; project?: string; routingPlanId?: string };
      /** The request's spans; only when tracing is on (api/middleware/trace-request.ts). */
      trace?: RequestTrace;
    }
  }
}
