import { config } from '../config/env';
import type { BlobStorage } from './storage';
import { LocalStorage } from './local';

export type { BlobStorage };

let instance: BlobStorage | undefined;

/** The configured image storage (IMAGE_STORAGE=local|s3), one per process. */
export function imageStorage(): BlobStorage {
  if (!instance) {
    const cfg = config();
    // the AWS SDK (about 30 MB) is loaded only by a process configured for S3
    instance = cfg.imageStorage === 's3' ? new (require('./s3') as typeof import('./s3')).S3Storage({ ...cfg.imageS3, bucket: cfg.imageS3.bucket! }) : new LocalStorage(cfg.imageStorageDir);
  }
  return instance;
}
