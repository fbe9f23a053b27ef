describe("calc", () => {
  test("adds", () => { expect(1 + 1).toBe(2); });
  test("subtracts", () => { expect(1 - 1).toBe(1); });
  test.skip("waits", () => {});
  test("slow one", () => { const t = Date.now(); while (Date.now() - t < 30) {} });
  describe("nested", () => { test("throws", () => { throw new Error("boom"); }); });
});
