import type { Router } from 'express';
import { adminRouter } from '../admin-router';
import Joi from 'joi';
import { Transaction } from 'sequelize';
import { requireJson } from '../../middleware/require-json';
import { validate } from '../../validate';
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
export function billingRouter(): Router {
  const r = adminRouter();
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
  { method: 'post', path: '/billing/records', family: 'billing', summary: "Tops up, credits or adjusts an organization's wallet.", body: billingRecordBody, created: true },
];
