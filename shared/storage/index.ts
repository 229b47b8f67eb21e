import { config } from '../config/env';
import type { BlobStorage } from './storage';
import { LocalStorage } from './local';
import { S3Storage } from './s3';

export type { BlobStorage };

let instance: BlobStorage | undefined;

/** The configured image storage (IMAGE_STORAGE=local|s3), one per process. */
export function imageStorage(): BlobStorage {
  if (!instance) {
    const cfg = config();
    instance = cfg.imageStorage === 's3' ? new S3Storage({ ...cfg.imageS3, bucket: cfg.imageS3.bucket! }) : new LocalStorage(cfg.imageStorageDir);
  }
  return instance;
}
