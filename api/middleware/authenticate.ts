import type { Request, Response, NextFunction } from 'express';
import type { AppContext } from '../context';
import { errors } from '../../shared/errors/codes';
import { ApiError } from '../../shared/errors/ApiError';
import { INFERENCE_PREFIX, PLATFORM_PREFIX, looksLikeInferenceKey } from '../../shared/auth/apiKeys';
import { sha256Hex } from '../../shared/crypto';
import { NO_ALIASES } from '../../shared/tenancy/directory';
import { keyRefusal } from '../../shared/tenancy/key-refusal';
import { authFailure } from '../../shared/auth/auth-failures';
import { noteKeyUsed } from '../../shared/tenancy/last-used';
import { logState } from './request-log';

function bearer(req: Request): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h.trim());
  return m ? m[1].trim() : undefined;
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() !== '' ? s.trim() : undefined;
}

/**
 * Finds the gateway key and, separately, a caller's own upstream key:
 * 1. `SERVICE-API-KEY` (preferred), or the key in the path (`/a/{api_key}/...`);
 * 2. `Authorization: Bearer` / `x-api-key` when the value carries `svc_`;
 * 3. a Bearer / x-api-key value without `svc_` is the caller's own upstream key (passthrough).
 */
export function presentedKeys(req: Request): { gatewayKey?: string; upstreamKey?: string } {
  const explicit = header(req, 'service-api-key') ?? req.pathAuth?.apiKey;
  const candidates = [bearer(req), header(req, 'x-api-key')].filter((v): v is string => !!v);
  const gatewayFromHeaders = candidates.find((v) => v.startsWith(INFERENCE_PREFIX));
  const upstreamKey = candidates.find((v) => !v.startsWith(INFERENCE_PREFIX));
  return { gatewayKey: explicit ?? gatewayFromHeaders, upstreamKey };
}

const PLACEMENTS = 'Send the gateway key (svc_…) in the SERVICE-API-KEY header, as Authorization: Bearer svc_…, or as x-api-key: svc_….';

/**
 * Why no gateway key was found, naming what was received (never its value) and the three placements.
 * A non-svc_ value (a provider key pasted by habit) is only passed through beside a gateway key.
 */
export function missingKeyMessage(req: Request): string {
  const received = [bearer(req) && 'a bearer token', header(req, 'x-api-key') && 'an x-api-key value'].filter(Boolean);
  if (!received.length) return `Missing API key. ${PLACEMENTS}`;
  return `No gateway API key: received ${received.join(' and ')} not starting with svc_ (a provider key is passed through only beside a gateway key). ${PLACEMENTS}`;
}

/** Authenticates an inference request and attaches `req.auth`. */
export function authenticate(ctx: AppContext) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    req.trace?.begin('authenticate');
    try {
      const { gatewayKey, upstreamKey } = presentedKeys(req);
      // a bearer or x-api-key value that is no gateway key was presented and refused (RFC 6750's invalid_token)
      if (!gatewayKey) throw errors.invalidApiKey(missingKeyMessage(req), !!(bearer(req) || header(req, 'x-api-key')));
      // A key that was presented and failed counts against the client's address (429 past the limit).
      const state = logState(res);
      const refuse = async (message: string) => {
        const answer = await authFailure(ctx.redis, req.ip, errors.invalidApiKey(message));
        // past the address's limit a refused key writes no request log row: a holder of a dead key
        // cannot fill its org's log (the rows of the limit's first refusals show what happened)
        if (answer.status === 429 && state) state.refusedKey = undefined;
        return answer;
      };
      if (gatewayKey.startsWith(PLATFORM_PREFIX)) throw await refuse('Management keys cannot call inference endpoints.');
      if (!looksLikeInferenceKey(gatewayKey)) throw await refuse('Malformed API key.');
      await ctx.directory.sync();
      const keyHash = sha256Hex(gatewayKey);
      const rec = await ctx.directory.keyByHash(keyHash);
      // a refused key that exists still gets its request log row, under its org (api/middleware/request-log.ts)
      if (rec && state) state.refusedKey = { orgId: rec.orgId, keyId: rec.id, projectId: rec.projectId, userId: rec.userId };
      const refused = keyRefusal(rec); // always a reason when there is no record
      if (!rec || refused !== undefined) throw await refuse(refused!);
      const org = await ctx.directory.org(rec.orgId);
      if (!org) throw await refuse('Unknown API key.');

      let projectId = rec.projectId;
      let modelMap: Record<string, string> = NO_ALIASES;
      let routingPlanId: string | null = null;
      const plan = req.pathAuth?.routingPlanId ? await ctx.directory.routingPlan(req.pathAuth.routingPlanId) : undefined;
      if (req.pathAuth?.routingPlanId) {
        if (!plan || plan.orgId !== rec.orgId) {
          throw new ApiError(404, 'routing_plan_not_found', 'No such routing plan for this API key.');
        }
        routingPlanId = plan.id;
        modelMap = plan.modelMap;
      }
      const requestedProject = header(req, 'service-project-id') ?? req.pathAuth?.project;
      if (!projectId && !requestedProject && plan?.projectId) {
        // the plan's project, refused once archived as its id or slug would be (it ran on, billed to the archived project)
        if (!(await ctx.directory.project(rec.orgId, plan.projectId))) throw new ApiError(400, 'invalid_project', 'The project this routing plan is bound to is archived.');
        projectId = plan.projectId;
      }
      if (requestedProject) {
        const p = await ctx.directory.project(rec.orgId, requestedProject);
        if (!p) {
          const quoted = requestedProject.length > 64 ? `${requestedProject.slice(0, 64)}…` : requestedProject;
          throw new ApiError(400, 'invalid_project', `Unknown project '${quoted}' for this organization.`);
        }
        if (rec.projectId && rec.projectId !== p.id) {
          throw new ApiError(403, 'project_mismatch', 'This API key is bound to a different project.');
        }
        projectId = p.id;
      }
      req.auth = {
        keyId: rec.id,
        keyHash,
        orgId: rec.orgId,
        org,
        projectId,
        userId: rec.userId,
        callerUpstreamKey: upstreamKey ?? null,
        routingPlanId,
        modelMap,
        controls: rec.controls,
      };
      void noteKeyUsed(ctx.redis, rec.orgId, rec.id);
      ctx.fairRead.admit(req, res, rec.orgId);
      req.trace?.begin('validate'); // reading the body, its checks, the model: until run-job admits
      next();
    } catch (err) {
      req.trace?.endStep(err instanceof ApiError ? err.code : 'error');
      next(err);
    }
  };
}
