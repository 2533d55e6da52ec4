import { defineConfig } from "tsup";

export default defineConfig([
  // No source maps in the package: the output is readable unminified code (ESM, CJS) and the
  // maps would triple the tarball for users who never open them.
  {
    entry: { index: "src/index.ts" },
    format: ["esm", "cjs"],
    target: "es2022",
    dts: { banner: '/// <reference lib="esnext.disposable" />', compilerOptions: { stripInternal: true } },
    clean: true,
    treeshake: true,
  },
  {
    // Browser build for a plain <script> tag: exposes the global `UpstashLock`.
    // It bundles no Redis client because src/ only imports types from one.
    entry: { index: "src/index.ts" },
    format: ["iife"],
    globalName: "UpstashLock",
    target: "es2022",
    platform: "browser",
    minify: true,
    // Minified, yet `error.constructor.name` and stack traces still say LockRedisError, not a letter.
    keepNames: true,
  },
]);
