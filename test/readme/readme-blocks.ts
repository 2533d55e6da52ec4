import { readFileSync } from "node:fs";

const root = new URL("../../", import.meta.url);

/** A code block of README.md that claims to be a region of an example file. */
export interface ReadmeBlock {
  file: string;
  region: string;
  code: string;
}

/** Every ```ts block in README.md preceded by `<!-- example: path#region -->`. */
export function readmeBlocks(): ReadmeBlock[] {
  const readme = readFileSync(new URL("README.md", root), "utf8");
  const pattern = /<!-- example: ([^#\s]+)#([\w-]+) -->\s*```ts\n([\s\S]*?)```/g;
  return [...readme.matchAll(pattern)].map(([, file = "", region = "", code = ""]) => ({
    file,
    region,
    code,
  }));
}

/** Every ```ts or ```typescript block in README.md, tagged or not. */
export function allTypeScriptBlocks(): string[] {
  const readme = readFileSync(new URL("README.md", root), "utf8");
  return [...readme.matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)].map(([, code = ""]) => code);
}

/** The lines between `// #region name` and the next `// #endregion` in an example file. */
export function exampleRegion(file: string, region: string): string {
  const text = readFileSync(new URL(file, root), "utf8");
  const start = text.indexOf(`// #region ${region}\n`);
  if (start === -1) throw new Error(`${file} has no region ${region}`);
  const bodyStart = start + `// #region ${region}\n`.length;
  const end = text.indexOf("// #endregion", bodyStart);
  return text.slice(bodyStart, end);
}
