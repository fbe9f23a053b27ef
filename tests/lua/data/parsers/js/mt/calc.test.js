const assert = require("assert");
describe("calc", () => {
  it("adds", () => { assert.equal(1 + 1, 2); });
  it("subtracts", () => { assert.equal(1 - 1, 1); });
  it.skip("waits", () => {});
  describe("nested", () => { it("throws", () => { throw new Error("boom"); }); });
});
