package calc

import "testing"

func TestAdd(t *testing.T) {
	if 1+1 != 2 {
		t.Fatal("math")
	}
}

func TestSub(t *testing.T) {
	t.Errorf("got %d, want %d", 1, 2)
}

func TestSkip(t *testing.T) { t.Skip("not here") }

func TestTable(t *testing.T) {
	for _, c := range []struct{ name string; ok bool }{{"one case", true}, {"two/deep", false}} {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Fail()
			}
		})
	}
}

func TestPanic(t *testing.T) { panic("boom") }
