/**
 * Whose stored objects (stored chat completions, stored responses, conversations) a request reaches:
 * its organization's, and within it only its project's when the request has one (a project-bound
 * key, `SERVICE-PROJECT-ID`, `/a/{key}/p/{project}`, a routing plan's project), as an OpenAI project
 * key reaches only its project's. A request without a project reaches the whole organization's.
 * `req.auth` is one.
 */
export interface StoreScope {
  orgId: string;
  projectId: string | null;
}

/** The SQL condition of a scope, over a table's `org_id` and `project_id`, with the replacements `:orgId` and `:projectId`. */
export function scopeSql(s: StoreScope): string {
  return s.projectId ? 'org_id = :orgId AND project_id = :projectId' : 'org_id = :orgId';
}

/** The scope's replacements for scopeSql. */
export function scopeValues(s: StoreScope): { orgId: string; projectId: string | null } {
  return { orgId: s.orgId, projectId: s.projectId };
}

/** The scope as a Sequelize `where` over `orgId` and `projectId`. */
export function scopeWhere(s: StoreScope): { orgId: string; projectId?: string } {
  return s.projectId ? { orgId: s.orgId, projectId: s.projectId } : { orgId: s.orgId };
}
