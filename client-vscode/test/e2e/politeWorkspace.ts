// The workspace of the fake model's "hello politely" script (fake_llm_server.py): it edits
// greet.py and runs the tests. Shared by the everyday real-VS-Code test and the screenshots.
export const POLITE_FILES: Record<string, string> = {
  "greet.py": 'def greet(name):\n    return "Hello " + name\n',
  "tests/__init__.py": "",
  "tests/test_greet.py":
    "import unittest\n\nfrom greet import greet\n\n\nclass GreetTest(unittest.TestCase):\n" +
    '    def test_polite(self):\n        self.assertEqual(greet("Ada"), "Hello, Ada!")\n',
};
