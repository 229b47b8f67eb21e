import { QueryTypes, Transaction } from 'sequelize';
import { db } from '../db/sequelize';
import { ApiError } from '../errors/ApiError';

/**
 * Prepaid credit: reserve before an upstream call, settle at the real cost after, or release.
 * Every step is one Postgres transaction that locks the org's wallet row (`FOR UPDATE`), so
 * concurrent requests of one org queue on that row and can never overdraw it. Steps are idempotent
 * by request id: reserving twice holds once, settling or releasing a finished reservation is a no-op.
 * Amounts are integer micro-dollars (BIGINT; carried here as JS numbers, exact below 2^53).
 */

export interface Reservation {
  requestId: string;
  orgId: string;
  amountMicros: number;
  state: 'reserved' | 'settled' | 'released';
  settledMicros: number | null;
}

interface WalletRow {
  id: string;
  balance_micros: string;
  reserved_micros: string;
  credits_bound: string | null;
}

interface ReservationRow {
  org_id: string;
  request_id: string;
  amount_micros: string;
  settled_micros: string | null;
  state: Reservation['state'];
}

const toReservation = (r: ReservationRow): Reservation => ({
  requestId: r.request_id,
  orgId: r.org_id,
  amountMicros: Number(r.amount_micros),
  state: r.state,
  settledMicros: r.settled_micros === null ? null : Number(r.settled_micros),
});

function tx<T>(fn: (t: Transaction) => Promise<T>): Promise<T> {
  return db().transaction(fn);
}

async function lockWallet(t: Transaction, orgId: string): Promise<WalletRow | undefined> {
  const rows = await db().query<WalletRow>(
    'SELECT id, balance_micros, reserved_micros, credits_bound FROM wallets WHERE org_id = :orgId FOR UPDATE',
    { replacements: { orgId }, type: QueryTypes.SELECT, transaction: t },
  );
  return rows[0];
}

async function findReservation(t: Transaction | undefined, requestId: string, lock: boolean): Promise<ReservationRow | undefined> {
  const rows = await db().query<ReservationRow>(
    `SELECT org_id, request_id, amount_micros, settled_micros, state FROM credit_reservations WHERE request_id = :requestId${lock ? ' FOR UPDATE' : ''}`,
    { replacements: { requestId }, type: QueryTypes.SELECT, transaction: t },
  );
  return rows[0];
}

export const walletErrors = {
  insufficient: (available: number, needed: number) =>
    new ApiError(402, 'insufficient_credits', `The organization's wallet has ${available} micro-dollars available; this request needs ${needed}.`, {
      details: { credits_available: available, credits_needed: needed },
    }),
  tooLarge: (bound: number, needed: number) =>
    new ApiError(402, 'reservation_too_large', `This request needs ${needed} micro-dollars, over the organization's per-request bound of ${bound}.`, {
      details: { credits_bound: bound, credits_needed: needed },
    }),
};

/** Holds `amountMicros` of the org's credit for one request, or throws 402. */
export async function reserve(orgId: string, requestId: string, amountMicros: number): Promise<Reservation> {
  const amount = Math.max(0, Math.ceil(amountMicros));
  return tx(async (t) => {
    const wallet = await lockWallet(t, orgId);
    const existing = await findReservation(t, requestId, true);
    if (existing) return toReservation(existing);
    if (!wallet) throw walletErrors.insufficient(0, amount);
    const bound = wallet.credits_bound === null ? null : Number(wallet.credits_bound);
    if (bound !== null && amount > bound) throw walletErrors.tooLarge(bound, amount);
    const available = Number(wallet.balance_micros) - Number(wallet.reserved_micros);
    if (amount > available) throw walletErrors.insufficient(Math.max(0, available), amount);
    await db().query('UPDATE wallets SET reserved_micros = reserved_micros + :amount, updated_at = now() WHERE id = :id', {
      replacements: { amount, id: wallet.id },
      transaction: t,
    });
    await db().query(
      `INSERT INTO credit_reservations (id, org_id, request_id, amount_micros, state, created_at, updated_at)
       VALUES (gen_random_uuid(), :orgId, :requestId, :amount, 'reserved', now(), now())`,
      { replacements: { orgId, requestId, amount }, transaction: t },
    );
    return { requestId, orgId, amountMicros: amount, state: 'reserved', settledMicros: null };
  });
}

/**
 * Finishes a reservation: `chargeMicros` (capped at what was reserved) leaves the balance, the hold
 * is lifted. With `chargeMicros` undefined it is a release (nothing charged). Returns the
 * reservation as it ends up, or undefined when there was none.
 */
async function finish(requestId: string, chargeMicros: number | undefined): Promise<Reservation | undefined> {
  const seen = await findReservation(undefined, requestId, false);
  if (!seen) return undefined;
  if (seen.state !== 'reserved') return toReservation(seen);
  return tx(async (t) => {
    const wallet = await lockWallet(t, seen.org_id); // same lock order as reserve: wallet, then reservation
    const r = await findReservation(t, requestId, true);
    if (!r || r.state !== 'reserved' || !wallet) return r ? toReservation(r) : undefined;
    const amount = Number(r.amount_micros);
    const charge = chargeMicros === undefined ? 0 : Math.min(amount, Math.max(0, Math.ceil(chargeMicros)));
    const state = chargeMicros === undefined ? 'released' : 'settled';
    await db().query(
      'UPDATE wallets SET reserved_micros = reserved_micros - :amount, balance_micros = balance_micros - :charge, updated_at = now() WHERE id = :id',
      { replacements: { amount, charge, id: wallet.id }, transaction: t },
    );
    await db().query(
      'UPDATE credit_reservations SET state = :state, settled_micros = :charge, updated_at = now() WHERE request_id = :requestId',
      { replacements: { state, charge, requestId }, transaction: t },
    );
    return { ...toReservation(r), state, settledMicros: charge };
  });
}

/** Charges the real cost (never more than was reserved) and lifts the hold. Idempotent. */
export function settle(requestId: string, chargeMicros: number): Promise<Reservation | undefined> {
  return finish(requestId, chargeMicros);
}

/** Lifts the hold without charging (the call failed or never ran). Idempotent. */
export function release(requestId: string): Promise<Reservation | undefined> {
  return finish(requestId, undefined);
}

/** Gives an org a wallet (if it has none) and adds credit to it. */
export async function credit(orgId: string, micros: number, opts: { creditsBound?: number | null } = {}): Promise<void> {
  await tx(async (t) => {
    await db().query(
      `INSERT INTO wallets (id, org_id, balance_micros, reserved_micros, credits_bound, created_at, updated_at)
       VALUES (gen_random_uuid(), :orgId, 0, 0, NULL, now(), now()) ON CONFLICT (org_id) DO NOTHING`,
      { replacements: { orgId }, transaction: t },
    );
    await db().query('UPDATE wallets SET balance_micros = balance_micros + :micros, updated_at = now() WHERE org_id = :orgId', {
      replacements: { micros: Math.round(micros), orgId },
      transaction: t,
    });
    if (opts.creditsBound !== undefined) {
      await db().query('UPDATE wallets SET credits_bound = :bound WHERE org_id = :orgId', {
        replacements: { bound: opts.creditsBound, orgId },
        transaction: t,
      });
    }
  });
}
