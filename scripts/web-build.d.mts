// Types of scripts/web-build.mjs for the TypeScript that imports it (the tests).
export const ROOT: string;
export const WEB_OUT: string;
export function webStale(out?: string): boolean;
export function buildWebApp(out?: string): Promise<number>;
