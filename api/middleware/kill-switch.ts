import type { Request, Response, NextFunction } from 'express';
import type { SwitchBoard, Feature } from '../../shared/switches/switches';
import { FEATURES } from '../../shared/switches/switches';
import { ApiError } from '../../shared/errors/ApiError';

/** 503 `<feature>_disabled` while the operator switch is engaged; the route stays registered. */
export function killSwitch(board: SwitchBoard, feature: Feature) {
  return (_req: Request, _res: Response, next: NextFunction): void => {
    if (board.engaged(feature)) {
      return next(new ApiError(503, FEATURES[feature], `This feature is switched off by the operator for now; retry later.`, { retryAfter: 30 }));
    }
    next();
  };
}
