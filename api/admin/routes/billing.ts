import type { Router } from 'express';
import { adminRouter } from '../admin-router';
import Joi from 'joi';
import { Transaction } from 'sequelize';
import { requireJson } from '../../middleware/require-json';
import { validate, validateQuery } from '../../validate';
import { orgUsageFigures } from '../../../shared/billing/usage-figures';
import { ApiError } from '../../../shared/errors/ApiError';
import { db } from '../../../shared/db/sequelize';
import { BillingRecord, Organization, Wallet } from '../../../shared/db/models';
import { present } from '../resources/define';
import { billingRecords } from '../resources/definitions/commerce';
import { actorOf } from '../actor';
import type { RouteDoc } from '../openapi/route-doc';

export const billingRecordBody = Joi.object({
  org_id: Joi.string().guid().required(),
  kind: Joi.string().valid('top_up', 'credit', 'adjustment').required(),
  amount_micros: Joi.number().integer().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).invalid(0).required()
    .description('Positive for top-ups and credits; an adjustment may be negative.'),
  note: Joi.string().max(500),
});

/**
 * `POST /billing/records`: a top-up, credit or adjustment, written with the wallet change in one
 * row-locked transaction (the wallet is created on the org's first record). A negative adjustment may
 * not take the balance below what open reservations hold.
 */
export const billingUsageQuery = Joi.object({
  org_id: Joi.string().guid().required(),
  days: Joi.number().integer().min(1).max(366).default(30).description('UTC days ending with today.'),
});

export function billingRouter(): Router {
  const r = adminRouter();
  r.get('/billing/usage', async (req, res) => {
    const q = validateQuery<{ org_id: string; days: number }>(billingUsageQuery, req.query);
    const f = await orgUsageFigures(q.org_id, q.days);
    res.json({
      object: 'usage_figures', org_id: f.org_id, from: f.from, to: f.to, totals: f.totals,
      data: f.rows.map((r) => ({ day: r.day, model: r.model, modality: r.modality, requests: r.requests, input_tokens: r.inputTokens, output_tokens: r.outputTokens, audio_seconds: r.audioSeconds, cost_micros: r.costMicros })),
    });
  });
  r.post('/billing/records', requireJson, async (req, res) => {
    const body = validate<{ org_id: string; kind: string; amount_micros: number; note?: string }>(billingRecordBody, req.body);
    if (body.kind !== 'adjustment' && body.amount_micros < 0) throw new ApiError(400, 'invalid_request', `A ${body.kind} must be positive.`);
    const org = await Organization.findByPk(body.org_id);
    if (!org) throw new ApiError(400, 'invalid_reference', `No organization with id '${body.org_id}'.`);
    const record = await db().transaction(async (t) => {
      await Wallet.findOrCreate({ where: { orgId: org.id }, defaults: { orgId: org.id }, transaction: t });
      const wallet = (await Wallet.findOne({ where: { orgId: org.id }, lock: Transaction.LOCK.UPDATE, transaction: t }))!;
      const balance = BigInt(wallet.balanceMicros) + BigInt(body.amount_micros);
      if (balance < BigInt(wallet.reservedMicros)) {
        throw new ApiError(400, 'insufficient_balance', 'The adjustment would take the balance below the credits held by open reservations.');
      }
      await wallet.update({ balanceMicros: balance.toString() }, { transaction: t });
      return BillingRecord.create(
        { orgId: org.id, kind: body.kind, amountMicros: String(body.amount_micros), note: body.note ?? null, actor: actorOf(req)?.label ?? null },
        { transaction: t },
      );
    });
    res.locals.auditTarget = record.id;
    res.status(201).json(present(billingRecords, record));
  });
  return r;
}

export const billingDocs: RouteDoc[] = [
  { method: 'get', path: '/billing/usage', family: 'billing', summary: "An organization's usage and cost per UTC day, model and modality (the dashboard's figures: tokens, audio, images, web search overage).", query: billingUsageQuery },
  { method: 'post', path: '/billing/records', family: 'billing', summary: "Tops up, credits or adjusts an organization's wallet.", body: billingRecordBody, created: true },
];
