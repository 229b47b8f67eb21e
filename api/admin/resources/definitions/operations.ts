import Joi from 'joi';
import { AuditLog, SchedulerEndpoint } from '../../../../shared/db/models';
import { ALL_QUEUES } from '../../../../shared/queues/names';
import { uuid, type ResourceDef } from '../define';

export const schedulerEndpoints: ResourceDef = {
  path: '/scheduler-endpoints',
  family: 'scheduler-endpoints',
  object: 'scheduler_endpoint',
  description: 'Scheduling settings per queue: worker concurrency, pause (enabled), fair-share priority step, waiting cap. Running workers and pods follow a write without a restart.',
  model: SchedulerEndpoint,
  fields: {
    queue: { schema: Joi.string().valid(...ALL_QUEUES), required: true, filter: true },
    concurrency: { schema: Joi.number().integer().min(1).max(4096).allow(null) },
    priority_step: { schema: Joi.number().integer().min(0).max(1_000_000).allow(null) },
    max_waiting: { schema: Joi.number().integer().min(1).allow(null) },
    enabled: { schema: Joi.boolean(), filter: true },
  },
};

export const auditLogs: ResourceDef = {
  path: '/audit-logs',
  family: 'audit-logs',
  object: 'audit_log',
  description: 'Every write on the management API and every platform-key creation and revocation (read only). Bodies are never stored: only the names of the fields sent.',
  model: AuditLog,
  ops: ['list', 'get'],
  bumpsEpoch: false,
  fields: {
    actor_type: { schema: Joi.string().valid('platform_key', 'admin_token', 'cli'), readOnly: true, filter: true },
    actor_id: { schema: uuid(), readOnly: true, filter: true },
    actor_label: { schema: Joi.string(), readOnly: true },
    method: { schema: Joi.string().valid('POST', 'PUT', 'PATCH', 'DELETE'), readOnly: true, filter: true },
    path: { schema: Joi.string(), readOnly: true },
    family: { schema: Joi.string(), readOnly: true, filter: true },
    target_id: { schema: Joi.string(), readOnly: true, filter: true },
    status: { schema: Joi.number().integer(), readOnly: true },
    outcome: { schema: Joi.string().valid('success', 'failure'), readOnly: true, filter: true },
    request_id: { schema: Joi.string(), readOnly: true, filter: true },
    fields: { schema: Joi.array().items(Joi.string()), readOnly: true },
  },
};
