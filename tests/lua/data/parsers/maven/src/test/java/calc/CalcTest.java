package calc;

import static org.junit.Assert.assertEquals;
import org.junit.Test;

public class CalcTest {
  @Test public void testAdd() { assertEquals(2, 1 + 1); }
  @Test public void testSub() { assertEquals(1, 1 - 1); }
  @Test public void testError() { throw new IllegalStateException("boom"); }
}
