import type { RedisClient } from '../redis/connection';
import { Op, UniqueConstraintError } from 'sequelize';
import { ApiKey, Membership, Organization, Plan, Project } from '../db/models';
import { lockOrgRow } from './invitations';
import { generateApiKey } from '../auth/apiKeys';
import { bumpEpoch } from '../cache/epoch';
import { db } from '../db/sequelize';
import { ApiError } from '../errors/ApiError';
import { isUuid } from '../uuid';
import { controlsView, type KeyControlsRow } from '../limits/key-input';

/** Operator actions on orgs and keys, shared by the CLI, the seed and the management API. */

/** How `slugify` derives a slug, in words (the OpenAPI document and the CLI's help say it). */
export const SLUG_RULE = 'lowercased; every run of characters other than a-z and 0-9 becomes one `-`; leading and trailing `-` dropped; at most 60 characters; `org` when nothing is left';

/** The slug of a name: the one rule of the CLI, the seed and the management API. */
export function slugify(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'org';
}

export async function findOrg(idOrSlug: string): Promise<Organization | null> {
  const byId = isUuid(idOrSlug);
  return Organization.findOne({ where: byId ? { [Op.or]: [{ id: idOrSlug }, { slug: idOrSlug }] } : { slug: idOrSlug } });
}

export async function createOrg(redis: RedisClient, input: { name: string; slug?: string; plan?: string }): Promise<Organization> {
  const plan = input.plan ? await Plan.findOne({ where: { name: input.plan } }) : null;
  if (input.plan && !plan) throw new Error(`Unknown plan '${input.plan}'`);
  const org = await Organization.create({ name: input.name, slug: input.slug ?? slugify(input.name), planId: plan?.id ?? null });
  await bumpEpoch(redis);
  return org;
}

/** 409 `project_exists`: the org already has a project of this slug. */
export const projectExists = (slug: string, param?: string) => new ApiError(409, 'project_exists', `A project with slug '${slug}' already exists.`, param ? { param } : {});

/** Creates a project; a slug the org already has (taken meanwhile by a creation at the same time included) is 409 `project_exists`. */
export async function createProject(redis: RedisClient, orgId: string, name: string, slug = slugify(name)): Promise<Project> {
  const p = await Project.create({ orgId, name, slug }).catch((err: unknown) => {
    throw err instanceof UniqueConstraintError ? projectExists(slug) : err;
  });
  await bumpEpoch(redis);
  return p;
}

/** 400 `invalid_owner`: a key's member is not a member of its org (the management API's refusal). */
export const notAMember = (userId: string) => new ApiError(400, 'invalid_owner', `User '${userId}' is not a member of this organization.`, { param: 'user_id' });

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  orgId: string;
  projectId: string | null;
}

/** Creates an inference key; the raw key is returned once and never stored. */
/** `userId`: the key belongs to that member of the org (member search caps, switch and tool policy apply). */
export async function createApiKey(
  redis: RedisClient,
  input: { orgId: string; projectId?: string | null; name?: string; userId?: string | null; controls?: KeyControlsRow; createdBy?: string | null },
): Promise<CreatedKey> {
  const g = generateApiKey();
  const values = {
    orgId: input.orgId,
    projectId: input.projectId ?? null,
    name: input.name ?? null,
    userId: input.userId ?? null,
    prefix: g.visiblePrefix,
    keyHash: g.hash,
    revokedAt: null,
    ...(input.controls ?? {}),
    createdBy: input.createdBy ?? null,
  };
  const userId = input.userId;
  // a member's key is made under the org's row lock, where a removal revokes the member's keys
  // (members.ts): made before the removal it is revoked with the others; after, it is refused
  const row = !userId ? await ApiKey.create(values) : await db().transaction(async (transaction) => {
    await lockOrgRow(input.orgId, transaction);
    if (!(await Membership.findOne({ where: { orgId: input.orgId, userId }, transaction }))) throw notAMember(userId);
    return ApiKey.create(values, { transaction });
  });
  await bumpEpoch(redis);
  return { id: row.id, key: g.raw, prefix: g.visiblePrefix, orgId: row.orgId, projectId: row.projectId };
}

/** Changes the owner's controls on a key (only the fields given); every pod applies them from its next request. */
export async function updateKeyControls(redis: RedisClient, id: string, controls: KeyControlsRow): Promise<boolean> {
  if (!isUuid(id)) return false;
  const [n] = await ApiKey.update(controls, { where: { id } });
  await bumpEpoch(redis);
  return n > 0;
}

/**
 * Rotates a key: a new secret for the same key (its id, owner, limits, budget and usage carry on);
 * the old secret keeps working for `graceSeconds` (0: stops at once). Returns the new secret once.
 */
export async function rotateApiKey(redis: RedisClient, id: string, graceSeconds: number): Promise<CreatedKey | null> {
  if (!isUuid(id)) return null;
  const g = generateApiKey();
  // Row-locked: of two rotations at once the later one starts from the earlier one's secret, so each
  // secret answered works (the earlier one as the previous secret); unlocked, both read the same old
  // secret and the earlier answer's secret died with the later write. A key revoked meanwhile is not rotated.
  const k = await db().transaction(async (transaction) => {
    const row = await ApiKey.findOne({ where: { id, revokedAt: null }, lock: transaction.LOCK.UPDATE, transaction });
    return row?.update({ previousKeyHash: row.keyHash, previousExpiresAt: new Date(Date.now() + graceSeconds * 1000), keyHash: g.hash, prefix: g.visiblePrefix }, { transaction });
  });
  if (!k) return null;
  await bumpEpoch(redis);
  return { id: k.id, key: g.raw, prefix: g.visiblePrefix, orgId: k.orgId, projectId: k.projectId };
}

/** Revokes a key; every pod refuses it from its very next request (the cache epoch moves). */
export async function revokeApiKey(redis: RedisClient, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const [n] = await ApiKey.update({ revokedAt: new Date() }, { where: { id, revokedAt: null } });
  await bumpEpoch(redis);
  return n > 0;
}

export async function listApiKeys(orgId: string) {
  const rows = await ApiKey.findAll({ where: { orgId }, order: [['createdAt', 'ASC']] });
  return rows.map(keyListing);
}

/** A key as listings show it (never the secret): owner, state, the owner's controls, last use. */
export function keyListing(k: ApiKey) {
  return {
    id: k.id, prefix: k.prefix, name: k.name, projectId: k.projectId, userId: k.userId, revokedAt: k.revokedAt, createdAt: k.createdAt,
    createdBy: k.createdBy, lastUsedAt: k.lastUsedAt, ...controlsView(k),
    previousSecretUntil: k.previousExpiresAt && k.previousExpiresAt.getTime() > Date.now() ? k.previousExpiresAt : null,
  };
}
