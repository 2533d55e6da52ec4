import { existsSync } from "node:fs";
import { posix } from "node:path";
import { describe, expect, it } from "vitest";
import { documentationPages, pageText } from "./readme-blocks";

// The documentation is split over README.md and docs/: every relative link between them (and to the
// repository's files) must lead somewhere, anchors included.
const root = new URL("../../", import.meta.url);

/** The text outside fenced code blocks, where links live. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

/** GitHub's anchor for each heading of a page, numbered like GitHub when two headings repeat. */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading = ""] of prose(pageText(page)).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** Every relative link target of a page: `[text](target)` and `![alt](target)`, outside code. */
function relativeLinks(page: string): string[] {
  const targets = [...prose(pageText(page)).matchAll(/\]\(([^)\s]+)\)/g)].map(([, target = ""]) => target);
  return targets.filter((target) => !/^[a-z]+:/i.test(target));
}

describe("documentation links", () => {
  it.each(documentationPages())("every relative link of %s resolves, anchors included", (page) => {
    const broken = relativeLinks(page).filter((target) => {
      const [path = "", anchor] = target.split("#");
      const file = path === "" ? page : posix.normalize(posix.join(posix.dirname(page), path));
      if (file.startsWith("..") || !existsSync(new URL(file, root))) return true;
      return anchor !== undefined && file.endsWith(".md") && !anchors(file).has(anchor);
    });
    expect(broken).toEqual([]);
  });

  it("the README links to every page of docs/", () => {
    const linked = new Set(relativeLinks("README.md").map((target) => target.split("#")[0]));
    const pages = documentationPages().filter((page) => page !== "README.md");
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });
});
