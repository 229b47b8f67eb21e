import { expect } from 'chai';
import sharp from 'sharp';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { QueryTypes } from 'sequelize';
import { CreditReservation, UsageEvent, Wallet } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { usageSettled } from '../../helpers/usage';
import { expectErrorEnvelope } from '../../helpers/errors';

/** Real, tiny images of each accepted type, as data URLs. */
export interface Images {
  png: string;
  jpeg: string;
  webp: string;
  gif: string;
}

export async function makeImages(): Promise<Images> {
  const base = sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 200, g: 30, b: 30 } } });
  const png = await base.clone().png().toBuffer();
  const jpeg = await base.clone().jpeg().toBuffer();
  const webp = await base.clone().webp().toBuffer();
  const gif = await base.clone().gif().toBuffer();
  return {
    png: `data:image/png;base64,${png.toString('base64')}`,
    jpeg: `data:image/jpeg;base64,${jpeg.toString('base64')}`,
    webp: `data:image/webp;base64,${webp.toString('base64')}`,
    gif: `data:image/gif;base64,${gif.toString('base64')}`,
  };
}

/** A valid request with one question of each type. */
export function validBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'sim-decide',
    state: 'The invoice from Acme lists 12 widgets at 40 dollars each, is signed by the customer and is paid in full.',
    questions: {
      paid: { type: 'noul', instructions: 'Is the invoice paid?', criteria: { true: 'invoice paid in full', false: 'invoice unpaid or overdue' } },
      'route/Ω 1': { type: 'choice', instructions: 'Which team handles it?', criteria: { billing: 'invoice dollars paid', shipping: 'parcel courier tracking', legal: 'contract lawsuit' } },
      risk: { type: 'score', instructions: 'Rate the risk.', criteria: ['no risk, signed and paid in full', 'some risk, partly paid', 'high risk, unsigned and unpaid'] },
    },
    ...extra,
  };
}

export const decide = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  call('POST', '/v1/systemone', { headers: { ...keyHeader(key), ...headers }, json: body });

export const requestIdOf = (r: Reply) => r.headers.get('x-service-request-id')!;

export async function walletOf(orgId: string): Promise<{ balance: number; reserved: number }> {
  const w = await Wallet.findOne({ where: { orgId } });
  return { balance: Number(w?.balanceMicros ?? 0), reserved: Number(w?.reservedMicros ?? 0) };
}

/** Asserts an error answer: status, code, no usage event and no charge for its request id. */
export async function expectRefused(r: Reply, status: number, code: string): Promise<void> {
  expect(r.status, r.text).to.equal(status);
  expectErrorEnvelope(r.text, code); // the code, and never a stack trace
  const requestId = requestIdOf(r);
  expect(requestId).to.be.a('string').and.match(/^req_/);
  await usageSettled();
  expect(await UsageEvent.count({ where: { requestId } }), 'usage event').to.equal(0);
  // Refused before the wallet (no reservation), or reserved and then released: never settled.
  const res = await CreditReservation.findOne({ where: { requestId } });
  expect(res?.state ?? 'none', 'reservation').to.be.oneOf(['none', 'released']);
  expect(Number(res?.settledMicros ?? 0), 'settled micros').to.equal(0);
}

/**
 * Asserts that a decision answered by a model pool is accounted to the deployment that served it: one
 * usage event naming it, the reservation settled at what the event says was billed, and the request
 * log row (the Activity page's) naming it with the reply's attempts.
 */
export async function expectBilledTo(r: Reply, deployment: string): Promise<void> {
  await usageSettled();
  const requestId = requestIdOf(r);
  const events = await UsageEvent.findAll({ where: { requestId } });
  expect(events.map((e) => [e.modality, e.deployment])).to.deep.equal([['decision', deployment]]);
  const billed = (events[0].units as { billed_micros: number }).billed_micros;
  expect(billed).to.be.above(0);
  const reservation = await CreditReservation.findOne({ where: { requestId } });
  expect([reservation!.state, Number(reservation!.settledMicros)]).to.deep.equal(['settled', billed]);
  const [row] = await db().query<{ deployment: string; attempts: number }>('SELECT deployment, attempts FROM request_logs WHERE request_id = :requestId', { type: QueryTypes.SELECT, replacements: { requestId } });
  expect(row).to.deep.equal({ deployment, attempts: Number(r.headers.get('x-service-attempts')) });
}

export function sumOf(m: Record<string, number>): number {
  return Object.values(m).reduce((a, b) => a + b, 0);
}
