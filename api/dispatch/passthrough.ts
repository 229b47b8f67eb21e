import type { Request } from 'express';
import type { CatalogModel } from '../../shared/catalog/catalog';
import { ApiError } from '../../shared/errors/ApiError';

/**
 * Whether the request forwards the caller's own provider key (passthrough, docs/api.md): it sent one.
 * A passthrough request goes to the model's primary provider only (api/dispatch/route.ts), so that
 * provider's `passthrough` setting decides: one that refuses it (a self-hosted upstream that checks
 * no key, by default) answers 403 `passthrough_not_allowed` before anything is sent, reserved or
 * billed. The request is not served on the platform's credential instead: its caller meant its own
 * account to pay, and a made-up key must not reach an upstream that would take it.
 */
export function forwardsCallerKey(req: Request, model: CatalogModel): boolean {
  if (!req.auth?.callerUpstreamKey) return false;
  if (model.provider.passthrough) return true;
  throw passthroughRefused(model, "does not take callers' own provider keys (passthrough)");
}

/** 403 `passthrough_not_allowed`: the model (as `why` says) cannot be served on the caller's own key. */
export function passthroughRefused(model: CatalogModel, why: string): ApiError {
  const fix = "send only the gateway key (SERVICE-API-KEY, or Authorization: Bearer svc_…) to be served on the platform's credential";
  return new ApiError(403, 'passthrough_not_allowed', `The model '${model.publicId}' ${why}: ${fix}.`);
}
