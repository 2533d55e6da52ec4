// Checks the package as users receive it: packs the tarball, then runs attw and publint on it,
// proves the browser build bundles no Redis client and works without Node, proves the type
// declarations compile for a consumer whose `lib` is plain ES2022, proves each import's bundle from the
// one-file dist/ holds no more than one from src/'s modules (what `sideEffects: false` promises), and
// reports the sizes.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runInNewContext } from "node:vm";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "..");
const bin = (name) => join(root, "node_modules", ".bin", name);
const run = (command, args, options = {}) =>
  execFileSync(command, args, {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    ...options,
  });
const step = (text) => process.stdout.write(`\n== ${text}\n`);

const work = mkdtempSync(join(tmpdir(), "lock-package-"));
try {
  step("npm pack");
  const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work]));
  const tarball = join(work, packed.filename);
  const files = packed.files.map((file) => file.path).sort();
  process.stdout.write(`${packed.filename}: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked\n`);
  process.stdout.write(`${files.join("\n")}\n`);
  const unexpected = files.filter(
    (file) => !/^(dist\/|docs\/[^/]+\.md$|README\.md$|CHANGELOG\.md$|LICENSE$|package\.json$)/.test(file),
  );
  if (unexpected.length > 0)
    throw new Error(`Tarball holds files users do not need: ${unexpected.join(", ")}`);

  step("attw (are the types wrong?)");
  process.stdout.write(run(bin("attw"), [tarball, "--format", "table-flipped"]));

  step("publint");
  process.stdout.write(run(bin("publint"), ["run", tarball, "--strict"]));

  step("browser build (IIFE)");
  const iife = readFileSync(join(root, "dist/index.global.js"), "utf8");
  for (const marker of ["UpstashError", "upstash-sync-token", "Upstash-Encoding", "node:", "require("]) {
    if (iife.includes(marker)) throw new Error(`dist/index.global.js contains ${JSON.stringify(marker)}`);
  }
  const sandbox = { crypto: globalThis.crypto, TextEncoder, TextDecoder, setTimeout, performance };
  runInNewContext(`${iife}\nthis.exported = UpstashLock;`, sandbox);
  for (const name of [
    "Lock",
    "Semaphore",
    "Debounce",
    "LockAcquisitionError",
    "LockRedisError",
    "LockLostError",
    "LockError",
    "InstanceTimeoutError",
  ]) {
    if (typeof sandbox.exported?.[name] !== "function") throw new Error(`UpstashLock.${name} is missing`);
    // The minified build keeps class names, which users see in logs and stack traces.
    if (sandbox.exported[name].name !== name) {
      throw new Error(`UpstashLock.${name} is named ${JSON.stringify(sandbox.exported[name].name)}`);
    }
  }
  process.stdout.write(
    "global UpstashLock exposes Lock, Semaphore, Debounce and the error classes, by name\n",
  );
  // A fresh realm has no Symbol.asyncDispose (Node adds it outside V8): the build must install
  // the registered fallback so `await using` works, and must not throw where Symbol is frozen.
  const realm = { crypto: globalThis.crypto, TextEncoder };
  runInNewContext(
    `${iife}\nthis.disposable = typeof UpstashLock.Lock.prototype[Symbol.asyncDispose] === "function" && Symbol.asyncDispose === Symbol.for("Symbol.asyncDispose");`,
    realm,
  );
  if (realm.disposable !== true)
    throw new Error("the IIFE does not install Symbol.asyncDispose in a realm that lacks it");
  runInNewContext(`Object.freeze(Symbol);\n${iife}`, { crypto: globalThis.crypto });
  process.stdout.write("installs Symbol.asyncDispose where missing; loads where Symbol is frozen\n");

  step("no Node built-ins in dist");
  for (const file of ["dist/index.js", "dist/index.cjs"]) {
    const text = readFileSync(join(root, file), "utf8");
    if (/(from\s*["']node:|require\(["'](node:)?(crypto|fs|net|http|events|buffer)["']\))/.test(text)) {
      throw new Error(`${file} imports a Node built-in`);
    }
  }
  process.stdout.write("none\n");

  step("each import bundles only its own code (dist/ against src/'s modules)");
  // In the one file dist/index.js, a bundler drops an unused top-level statement only if it can prove it
  // pure: a template literal with a substitution, or a read of `Number.POSITIVE_INFINITY`, it keeps, and
  // with them every script they name (the Lock's Lua sat in every Debounce and quorum bundle).
  const gzipOf = async (from, exports) => {
    const result = await build({
      stdin: { contents: `export { ${exports} } from "${from}";`, resolveDir: root, loader: "ts" },
      bundle: true,
      minify: true,
      format: "esm",
      platform: "neutral",
      mainFields: ["module", "main"],
      write: false,
    });
    return gzipSync(result.outputFiles[0].contents, { level: 9 }).length;
  };
  for (const exports of ["Lock", "FairLock", "Semaphore", "Lock, quorum", "enableWakeUps", "Debounce"]) {
    const [dist, src] = [await gzipOf("./dist/index.js", exports), await gzipOf("./src/index.ts", exports)];
    process.stdout.write(`import { ${exports} }: ${dist} B gzip from dist/, ${src} B from src/\n`);
    // A margin for what one file lays out differently (the Symbol.asyncDispose shim, helper names).
    if (dist > src + 100) throw new Error(`import { ${exports} } bundles ${dist - src} B more from dist/`);
  }

  step("declarations for a consumer with lib es2022 and no @types/node");
  const consumer = join(work, "consumer");
  mkdirSync(join(consumer, "node_modules"), { recursive: true });
  run("tar", ["-xzf", tarball, "-C", join(consumer, "node_modules")]);
  mkdirSync(join(consumer, "node_modules/@upstash"), { recursive: true });
  run("mv", [join(consumer, "node_modules/package"), join(consumer, "node_modules/@upstash/lock")]);
  writeFileSync(
    join(consumer, "consumer.ts"),
    [
      'import { Lock, LockAcquisitionError, type LockStatus, type LockCreateConfig } from "@upstash/lock";',
      "const redis = { eval: async (_s: string, _k: string[], _a: (string | number)[]) => 1 as unknown };",
      'const options: LockCreateConfig = { id: "x", redis, lease: 1000, retry: { attempts: 1, delay: 5 } };',
      "const lock = new Lock(options);",
      "export async function check(): Promise<LockStatus> {",
      '  try { await lock.acquireOrThrow(); } catch (e) { if (e instanceof LockAcquisitionError) return "FREE"; }',
      "  return lock.getStatus();",
      "}",
      "",
    ].join("\n"),
  );
  for (const [module, moduleResolution] of [
    ["nodenext", "nodenext"],
    ["esnext", "bundler"],
  ]) {
    const compilerOptions = {
      strict: true,
      noEmit: true,
      lib: ["es2022"],
      types: [],
      target: "es2022",
      module,
      moduleResolution,
    };
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({ compilerOptions, files: ["consumer.ts"] }),
    );
    try {
      run(bin("tsc"), ["-p", "tsconfig.json"], { cwd: consumer });
    } catch (error) {
      throw new Error(`Consumer (${moduleResolution}) does not compile:\n${error.stdout}`);
    }
  }
  process.stdout.write("compiles under nodenext and bundler resolution\n");

  step("sizes");
  for (const file of ["dist/index.js", "dist/index.cjs", "dist/index.global.js"]) {
    const bytes = readFileSync(join(root, file));
    process.stdout.write(
      `${file}: ${statSync(join(root, file)).size} bytes, ${gzipSync(bytes).length} gzipped\n`,
    );
  }
  process.stdout.write("\npackage checks passed\n");
} finally {
  rmSync(work, { recursive: true, force: true });
}
