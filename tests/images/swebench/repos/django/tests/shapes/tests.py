from django.test import SimpleTestCase

import geometry


class AreaTests(SimpleTestCase):
    def test_square(self):
        self.assertEqual(geometry.square(3), 9)
