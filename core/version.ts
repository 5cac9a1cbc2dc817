import { readFileSync } from 'node:fs';
import { packageRoot } from './paths.ts';

export const version: string = JSON.parse(readFileSync(`${packageRoot}/package.json`, 'utf8')).version;
