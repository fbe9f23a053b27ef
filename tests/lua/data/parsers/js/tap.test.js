const test = require("node:test");
const assert = require("assert");
test("adds", () => { assert.equal(1 + 1, 2); });
test("subtracts", () => { assert.equal(1 - 1, 1); });
test("waits", { skip: true }, () => {});
