import { Op } from 'sequelize';
import { Image } from '../../shared/db/models';
import { deleteImages } from '../../shared/images/store';
import { imageNow } from '../../shared/images/clock';
import { logger } from '../../shared/logger';

/**
 * Deletes the bytes and rows of images past their expiry, in batches. The API already refuses an
 * expired id, so this only reclaims space; a byte deletion that fails keeps the row for the next run.
 * `now` is injectable so tests can sweep "seven days later".
 */
export async function expireImages(now: number = imageNow(), batch = 500): Promise<number> {
  let removed = 0;
  for (;;) {
    const due = await Image.findAll({ where: { expiresAt: { [Op.lte]: new Date(now) } }, limit: batch, order: [['expiresAt', 'ASC']] });
    if (due.length === 0) return removed;
    const done = await deleteImages(due);
    for (const { image, err } of done.failed) logger.warn({ err, image: image.id }, 'could not delete expired image bytes; will retry');
    if (done.failed.length === due.length) return removed;
    removed += done.removed;
    if (due.length < batch) return removed;
  }
}
