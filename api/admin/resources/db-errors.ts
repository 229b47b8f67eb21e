import { ForeignKeyConstraintError, UniqueConstraintError, DatabaseError } from 'sequelize';
import { ApiError } from '../../../shared/errors/ApiError';

/** Constraint violations become clear 4xx answers; anything else stays an error (a 500). */
export function fromDbError(err: unknown, op: 'write' | 'delete'): unknown {
  if (err instanceof UniqueConstraintError) {
    // an index on lower(col) names its field `lower(col::text)`: the column, compared case-insensitively
    const fields = Object.keys(err.fields ?? {}).map((f) => f.replace(/^lower\((\w+)(::\w+)?\)$/, '$1 (compared case-insensitively)')).join(', ');
    return new ApiError(409, 'already_exists', `A record with the same ${fields || 'unique value'} already exists.`);
  }
  if (err instanceof ForeignKeyConstraintError) {
    return op === 'delete'
      ? new ApiError(409, 'resource_in_use', 'Other records still refer to this one; remove or move them first.')
      : new ApiError(400, 'invalid_reference', `A referenced record does not exist (${String(err.fields ?? err.index ?? 'reference')}).`);
  }
  if (err instanceof DatabaseError && /out of range|invalid input syntax/i.test(err.message)) {
    return new ApiError(400, 'invalid_request', 'A value is out of range for its field.');
  }
  return err;
}
