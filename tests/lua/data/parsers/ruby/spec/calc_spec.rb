RSpec.describe "Calc" do
  it("adds") { expect(1 + 1).to eq(2) }
  it("subtracts") { expect(1 - 1).to eq(1) }
  it("waits", skip: "later") { }
  context "with errors" do
    it("raises") { raise "boom" }
  end
end
