import type Joi from 'joi';
import type { Family } from '../../../shared/platform/families';

/** A hand-written route's entry in the OpenAPI document, with the same Joi schemas that validate it. */
export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI path under /admin/v1, with `{param}` placeholders. */
  path: string;
  /** Null for the platform-admin paths (admin token, no scope). */
  family: Family | null;
  summary: string;
  body?: Joi.Schema;
  query?: Joi.ObjectSchema;
  /** The route answers 201 Created (documented as such); otherwise 200. */
  created?: boolean;
  /** Its answer may carry a write's `warnings` (define.ts Warning). */
  warns?: boolean;
}
