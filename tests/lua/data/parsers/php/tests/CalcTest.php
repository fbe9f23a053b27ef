<?php
namespace App\Tests;
use RuntimeException;
use PHPUnit\Framework\TestCase;

final class CalcTest extends TestCase
{
    public function testAddsNumbers(): void { $this->assertSame(2, 1 + 1); }
    public function testSubtractsNumbers(): void { $this->assertSame(1, 1 - 1); }
    public function testSkipped(): void { $this->markTestSkipped('not here'); }
    public function testErrors(): void { throw new RuntimeException('boom'); }
    /** @dataProvider pairs */
    public function testPairs(int $a, int $b): void { $this->assertSame($a, $b); }
    public function pairs(): array { return ['same' => [1, 1], 'differ' => [1, 2]]; }
}
