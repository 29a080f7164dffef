import { randomInt } from 'node:crypto';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random 3-character stage code (rows module STAGE_CODE; 238,328 of them, unique per base by import_jobs). */
export function randomStageCode(): string {
  let code = '';
  for (let i = 0; i < 3; i++) code += ALNUM[randomInt(ALNUM.length)];
  return code;
}
