import type { TestProject } from 'vitest/node';
import { startPrivateRedis, type PrivateRedis } from '../../src/infra/redis-server.js';

// Tests run against a real redis-server. When REDIS_URL is unset, one private server on a free
// loopback port serves the whole run; each test file isolates itself with its own key prefix.
let redis: PrivateRedis | undefined;

export async function setup(project: TestProject): Promise<void> {
  let url = process.env.REDIS_URL;
  if (!url) {
    redis = await startPrivateRedis();
    url = redis.url;
    process.env.REDIS_URL = url;
  }
  project.provide('redisUrl', url);
}

export async function teardown(): Promise<void> {
  await redis?.close();
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
