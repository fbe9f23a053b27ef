import { describe, test, expect } from "vitest";
describe("calc", () => {
  test("adds", () => { expect(1 + 1).toBe(2); });
  test("subtracts", () => { expect(1 - 1).toBe(1); });
  test.skip("waits", () => {});
  describe("nested", () => { test("throws", () => { throw new Error("boom"); }); });
});
