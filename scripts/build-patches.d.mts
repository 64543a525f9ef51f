// Types of build-patches.mjs, for the test that checks it (test/unit/build-patches.test.ts).
export declare const BUILTIN_BANNER: string;
export declare function cheapBuiltinImports(text: string, name: string): string;
export declare function importsThroughBoot(text: string, name: string): string;
