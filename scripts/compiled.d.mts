// Types of scripts/compiled.mjs, for the TypeScript that imports it (tests, the test run's setup).
export function isCompiledUpToDate(): boolean;
export function kitModule(source: string, compiled?: boolean): string;
export function compile(): Promise<boolean>;
